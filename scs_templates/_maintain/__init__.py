"""_maintain"""
