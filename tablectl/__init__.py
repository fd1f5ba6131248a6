"""tablectl: the controller for Japanese riichi-mahjong automatic tables."""

__version__ = "0.1.0"
