"""Streamlit-side helpers. The only non-page code that imports streamlit."""
