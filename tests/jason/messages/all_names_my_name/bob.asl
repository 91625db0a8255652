name(bobby).
