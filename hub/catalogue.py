"""The hub catalogue: environments verihub knows how to install, with where to get them.

The catalogue is JSON validated with pydantic (``schema_version`` 1). verihub ships one listing
the project's own environments (``hub/catalogue.json``).
"""

from __future__ import annotations

import json
from importlib import resources

from pydantic import BaseModel, Field

__all__ = ["Catalogue", "CatalogueEntry", "load_catalogue"]


class CatalogueEntry(BaseModel):
    id: str = Field(description="Environment id (the entry-point name).")
    version: str
    summary: str = ""
    tags: list[str] = Field(default_factory=list)
    license: str = ""
    author: str = ""
    source: str = Field(description="pip requirement or location to install from.")
    content_hash: str | None = Field(default=None, description="sha256:... of the package files.")


class Catalogue(BaseModel):
    schema_version: int = 1
    environments: list[CatalogueEntry] = Field(default_factory=list)

    def get(self, env_id: str) -> CatalogueEntry | None:
        return next((e for e in self.environments if e.id == env_id), None)


def load_catalogue() -> Catalogue:
    """The catalogue shipped with verihub."""
    text = resources.files("hub").joinpath("catalogue.json").read_text(encoding="utf-8")
    return Catalogue.model_validate(json.loads(text))
