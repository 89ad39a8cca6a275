"""Streamlit custom components with their bundled front ends (see each folder)."""
