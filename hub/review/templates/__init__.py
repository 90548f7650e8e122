"""Files that ``verihub init`` renders into a new environment package (see :mod:`hub.review.scaffold`)."""
