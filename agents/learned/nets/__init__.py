"""The networks of the learned players: the trainer's policy and move network, the SB3 feature
extractor and policy, and the facts of the own hand some of them read."""
