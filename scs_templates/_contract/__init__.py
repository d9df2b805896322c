"""_contract"""
