"""What every command's parser and output use, the shipped commands and a provider's alike:
settings files loaded the same way everywhere, ``-o`` formats, the example block of a
command's help. Below the providers, so that a provider's own commands can use it."""
