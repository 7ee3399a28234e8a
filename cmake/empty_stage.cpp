// Placeholder translation unit for a data-flow stage that has no sources yet.
