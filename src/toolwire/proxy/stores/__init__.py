"""Where the proxy keeps session state."""
