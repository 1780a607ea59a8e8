"""Config linter: loader (config files -> RopeSpec with key locations) and rules."""
