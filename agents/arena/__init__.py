"""Players against each other: game runner, duplicate tournaments, statistics, reports, the ladder."""
