"""gunicorn entry point for OpenStack WSGI applications.

The applications read their options from sys.argv through oslo.config, and would choke on
gunicorn's own arguments; app() hands them only the arguments meant for them.
"""
import importlib
import sys


def app(factory, *args):
    module_name, function_name = factory.split(':')
    sys.argv = [sys.argv[0], *args]
    return getattr(importlib.import_module(module_name), function_name)()
