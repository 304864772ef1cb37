"""The session files a run processes: the paths a user names walked into files, each with its format; where runtimes keep them."""
