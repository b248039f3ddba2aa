print("viewportd")
