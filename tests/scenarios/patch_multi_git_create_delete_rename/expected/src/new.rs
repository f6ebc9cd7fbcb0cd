brand new
file
