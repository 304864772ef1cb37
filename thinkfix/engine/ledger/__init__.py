"""What undo needs: the sealed manifest of everything a repair changed, its checks, the restore, and a store's row changes."""
