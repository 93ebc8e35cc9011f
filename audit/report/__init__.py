"""Renderers: each a pure function of the result dict (terminal summary, HTML, dataset card)."""
