name(caroline).
