"""Reliability: fault, bad-input, security and soak tests across every package."""
