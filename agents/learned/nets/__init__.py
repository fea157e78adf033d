"""The learned players' networks: the trainer's policy, the SB3 features and policy, the hand's facts."""
