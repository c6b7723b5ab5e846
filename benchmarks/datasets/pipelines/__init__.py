"""One module per traced memory system; each turns a planned conversation into a trace."""
