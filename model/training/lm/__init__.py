"""A small decoder-only language model trained here, in which induction heads form.

text.py makes running English and Korean text from the textbook grammar (with the repetition
real text has), vocab.py trains its BPE tokenizer, probes.py measures heads while it trains,
train.py is the loop that writes a plain Hugging Face folder with snapshots.
"""
