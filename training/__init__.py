"""Training data (the synchronous English–Korean grammar), the training loop and evaluation."""
