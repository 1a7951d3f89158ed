"""`raystorm web`: the pages and the HTTP API over one collection, served by Ray Serve."""
