"""core.foreign"""
