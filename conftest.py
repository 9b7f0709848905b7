"""Repository-level pytest configuration: the pytester fixture for the plugin's own tests."""

pytest_plugins = ["pytester"]
