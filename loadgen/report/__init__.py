"""Outputs: console tables, progress, files and plots. They read the summary only."""
