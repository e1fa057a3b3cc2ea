"""Speed benchmarks: cardenvs' own loops and the peer environments they are compared with."""
