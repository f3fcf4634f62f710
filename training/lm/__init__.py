"""A small decoder-only language model trained here, in which induction heads form.

text.py makes running English and Korean text from the textbook grammar (with the repetition
real text has; story.py its long paragraphs), vocab.py trains its BPE tokenizer, probes.py
measures heads while it trains, schedule.py holds the recipe's legs, train.py is the loop that
writes a plain Hugging Face folder with snapshots, ship.py and figures.py finish it with its
card.
"""
