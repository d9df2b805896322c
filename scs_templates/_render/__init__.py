"""_render"""
