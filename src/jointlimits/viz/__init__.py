"""Pictures: PNG figures of limits and clips (:mod:`.plots`) and the interactive HTML page
(:mod:`.viewer`)."""
