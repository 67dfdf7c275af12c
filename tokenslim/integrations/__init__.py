"""Integrations with engines that run tokenslim at scale (each needs its pip extra).

* :mod:`tokenslim.integrations.ray`: compress a Ray Dataset of requests (``pip install 'tokenslim[ray]'``).
"""
