"""``GET /docs``: the API's documentation page (Swagger UI), every asset served by this server
from the ``swagger-ui-bundle-v2`` package (in the ``[serve]`` extra): nothing is fetched from
elsewhere, the schema validator badge is off. Without that package there is no ``/docs``
(/openapi.json is always served)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"


def bundle() -> Path | None:
    """Swagger UI's files as the installed package ships them, or None."""
    try:
        from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    path = Path(str(swagger_ui_path))
    return path if (path / "swagger-ui-bundle.js").is_file() else None


def install(app: FastAPI) -> bool:
    """Add ``/docs`` (and its assets) to ``app`` when Swagger UI is installed."""
    found = bundle()
    if found is None:
        return False
    app.mount(ASSETS, StaticFiles(directory=found), name="docs-assets")
    title = f"{app.title}: API"

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=title,
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
            # Swagger UI's default asks a third-party validator for a badge: never
            swagger_ui_parameters={"validatorUrl": None},
        )

    return True
