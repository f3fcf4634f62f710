"""Long contexts at bounded memory: every head's attention reduced as it is computed.

attend.py runs attention chunk by chunk over queries; reduce.py folds each chunk's
probabilities into pooled maps and statistics; trace.py holds the LongTrace and its exact
block(); budget.py estimates a long capture's peak bytes. model.dispatch.capture_long is the
public entry; the backends (model/backends/*/long.py) run their models through these.
"""

from .budget import LONG_CAP, LONG_FROM, long_estimate
from .trace import LongTrace

__all__ = ["LONG_CAP", "LONG_FROM", "LongTrace", "long_estimate"]
