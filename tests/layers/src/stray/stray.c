/* stray.c - a folder of src/ in no layer (check-layers.py's fixture). */
