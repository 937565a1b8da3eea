"""The version of loadgen: a leaf, so modules that stamp it need not import the package door."""

__version__ = "0.1.0"
