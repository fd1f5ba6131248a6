"""The package's version, on its own so that any module can name it without importing the
package's ``__init__`` (which loads the command line)."""

__version__ = "0.1.0"
