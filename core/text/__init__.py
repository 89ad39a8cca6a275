"""core.text"""
