"""docs/configuration.md is what the configurable traits of jupyter-loop's classes say."""

from __future__ import annotations

import importlib
import pkgutil

from traitlets import HasTraits

import jupyter_loop
from jupyter_loop.config_doc import DOC, render, sections


def test_the_page_matches_the_traits() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/configuration.md is out of date: python -m jupyter_loop.config_doc"
    )


def configurable_classes() -> set[type]:
    """Every class in jupyter_loop that defines a configurable trait of its own."""
    found: set[type] = set()
    for module_info in pkgutil.walk_packages(jupyter_loop.__path__, "jupyter_loop."):
        if module_info.name.endswith(".__main__"):
            continue  # runs a command when imported
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if not (isinstance(value, type) and issubclass(value, HasTraits)):
                continue
            if not value.__module__.startswith("jupyter_loop"):
                continue
            if any(trait.this_class is value for trait in value.class_traits(config=True).values()):
                found.add(value)
    return found


def test_every_configurable_class_is_on_the_page() -> None:
    """A new class with config=True traits (or a mixin the app does not inherit) would be
    left out of the page: each must be a documented class or one of its bases."""
    documented = {section.cls for section in sections()}
    left_out = [
        cls.__qualname__
        for cls in configurable_classes()
        if not any(issubclass(shown, cls) for shown in documented)
    ]
    assert left_out == []
