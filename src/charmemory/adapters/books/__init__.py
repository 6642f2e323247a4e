"""Memory books on disk: the lorebook files, their versions, the journal of multi-book
writes that the next start finishes, and the profiles that write scene memories."""
