"""Alembic's environment for the store: always run by :func:`pytest_verial.store.open_store`
on its own connection (``config.attributes["connection"]``)."""

from __future__ import annotations

from alembic import context

from pytest_verial.store._tables import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
