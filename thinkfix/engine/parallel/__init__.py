"""The runners scan and repair share: the process pool and the Dask cluster, each given the per-file work to run."""
