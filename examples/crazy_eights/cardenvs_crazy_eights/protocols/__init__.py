"""The benchmark protocols of Crazy Eights (``crazy_eights_v<N>.json``) and their reference ladders, package data
that ``cardenvs benchmark --game crazy_eights`` reads (the spec's ``protocols``)."""
