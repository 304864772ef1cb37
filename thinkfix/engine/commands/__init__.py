"""Each command's library side, one entry point each: resolved settings in, a result out."""
