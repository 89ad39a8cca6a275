"""core.engine"""
