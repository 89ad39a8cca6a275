"""core.lessons"""
