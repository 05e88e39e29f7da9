"""Reading a question: code reads the closed classes (events, distances, numbers, names in the data), the model
fills a flat :class:`~.schema.Reading` from retrieved examples under a JSON schema narrowed to this question's
candidates, and code checks it (:mod:`.checks`) before anything runs."""
