"""The answer layer: question analysis, candidate fusion, calibrated confidence, verification, abstention."""
