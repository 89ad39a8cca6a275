"""core.training"""
