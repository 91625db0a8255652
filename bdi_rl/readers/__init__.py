"""Everything that reads run directories: the trace index and its cache, the web viewer,
`inspect`, `plot`, `export`, `qtable`, the dashboard. Never imports agent code.
"""
