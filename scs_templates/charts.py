"""Where the cluster charts live and how they are made ready to render (INTERFACE STUB).

Contract used by the render engine:
    chart_for(provider: str) -> ChartRef   # .name, .version, .path (a directory helm can
                                           # render with --skip-deps semantics: library chart
                                           # dependency already in place)
"""
