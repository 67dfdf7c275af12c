"""Reliability tests: make the shared strategies module importable.

The Hypothesis settings (derandomized, no database, no deadline) are applied per test
through ``reliability_strategies.CI_SETTINGS``, so loading this directory never changes
the settings of other test suites.
"""
